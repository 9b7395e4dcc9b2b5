// Weka's J48 (C4.5) with its defaults on the given folds, in one JVM:
//   java -cp /usr/share/java/weka.jar J48Folds.java DATA.arff
// DATA.arff's first attribute is the fold number (0..k-1) of each row and its last is the class.
// For each fold, J48 learns from the other folds' rows and classifies the fold's rows; one line
// per fold: "fold correct rows build_seconds leaves" (build_seconds: buildClassifier alone).
import java.io.BufferedReader;
import java.io.FileReader;
import weka.classifiers.trees.J48;
import weka.core.Instance;
import weka.core.Instances;

public class J48Folds {
    public static void main(String[] args) throws Exception {
        Instances data = new Instances(new BufferedReader(new FileReader(args[0])));
        int k = 0;
        for (int i = 0; i < data.numInstances(); i++) {
            k = Math.max(k, (int) data.instance(i).value(0) + 1);
        }
        for (int fold = 0; fold < k; fold++) {
            Instances train = new Instances(data, 0);
            Instances test = new Instances(data, 0);
            for (int i = 0; i < data.numInstances(); i++) {
                Instance row = data.instance(i);
                ((int) row.value(0) == fold ? test : train).add(row);
            }
            train.deleteAttributeAt(0);
            test.deleteAttributeAt(0);
            train.setClassIndex(train.numAttributes() - 1);
            test.setClassIndex(test.numAttributes() - 1);
            J48 tree = new J48();
            long started = System.nanoTime();
            tree.buildClassifier(train);
            double seconds = (System.nanoTime() - started) / 1e9;
            int correct = 0;
            for (int i = 0; i < test.numInstances(); i++) {
                if (tree.classifyInstance(test.instance(i)) == test.instance(i).classValue()) {
                    correct++;
                }
            }
            System.out.println(fold + " " + correct + " " + test.numInstances() + " " + seconds + " "
                               + (int) tree.measureNumLeaves());
        }
    }
}
